// The shells `mkt completion` writes for, as a leaf: the command's registration (in the start-up
// bundle) reads the list without loading the script generator in src/cli/completion.ts.
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];
