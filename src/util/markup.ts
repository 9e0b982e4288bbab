// escapeMarkup: text made safe for HTML and SVG, in element content and in quoted attribute
// values alike — the server-rendered pages (dashboard, checkout) and the status badges.

const UNSAFE = /[&<>"']/;

/** `&<>"'` as numeric character references; null and undefined as the empty string. */
export function escapeMarkup(v: unknown): string {
  const s = String(v ?? '');
  // Most strings (dates, numbers, hover texts) need nothing: test once before replacing.
  return UNSAFE.test(s) ? s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`) : s;
}
