// A progress bar for blob transfers, drawn with ink on stderr when stderr is a terminal;
// nothing at all in pipes and scripts; no colour when NO_COLOR is set (no-color.org) or TERM is dumb.
import React, { useEffect, useState } from 'react';
import { Box, Text, render } from 'ink';
import type { IOStreams } from '../../src/cli/io.js';
import type { BlobProgress } from '../../src/sync/blobs.js';
import { formatBytes } from '../../src/sync/pricing.js';

export interface ProgressReporter {
  update(p: BlobProgress): void;
  stop(): void;
}

const LABEL: Record<BlobProgress['phase'], string> = { hash: 'hashing', upload: 'uploading', download: 'downloading' };

function Bar({ subscribe, color }: { subscribe: (fn: (p: BlobProgress) => void) => void; color: boolean }): React.JSX.Element {
  const [p, setP] = useState<BlobProgress>({ phase: 'hash', done: 0, total: 0 });
  useEffect(() => subscribe(setP), [subscribe]);
  const width = 30;
  const frac = p.total > 0 ? Math.min(1, p.done / p.total) : 0;
  const filled = Math.round(frac * width);
  return (
    <Box>
      <Box width={12}>
        <Text>{LABEL[p.phase]}</Text>
      </Box>
      <Text color={color ? 'green' : undefined}>{'█'.repeat(filled)}</Text>
      <Text color={color ? 'gray' : undefined}>{'░'.repeat(width - filled)}</Text>
      <Text>{` ${(frac * 100).toFixed(0).padStart(3)}%  ${formatBytes(p.done)}${p.total ? ` / ${formatBytes(p.total)}` : ''}`}</Text>
    </Box>
  );
}

export function progressReporter(io: IOStreams): ProgressReporter {
  if (!io.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  let listener: ((p: BlobProgress) => void) | undefined;
  let last = 0;
  // ink's colour library ignores NO_COLOR, so the bar only asks for colours when they are allowed.
  const color = !io.env.NO_COLOR && io.env.TERM !== 'dumb';
  const app = render(<Bar color={color} subscribe={(fn) => (listener = fn)} />, { stdout: io.stderr as NodeJS.WriteStream, patchConsole: false, exitOnCtrlC: false });
  return {
    update(p) {
      const now = Date.now();
      // At most ~20 redraws a second, but always the final one.
      if (now - last < 50 && p.done < p.total) return;
      last = now;
      listener?.(p);
    },
    stop() {
      app.unmount();
    },
  };
}
