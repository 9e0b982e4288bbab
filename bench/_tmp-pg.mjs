import { openDatabase } from '../dist/src/store/sqlite.js';
import { rmSync } from 'node:fs';
rmSync('/tmp/tmp-pg2.db', { force: true });
const db = openDatabase('/tmp/tmp-pg2.db');
db.exec(`create table e(app_id text, user_id text, seq integer, key_id integer, device_id text, tbl text, op text, row_id text, ts text, data text, primary key (app_id, user_id, seq))`);
const ins = db.prepare('insert into e values (?,?,?,?,?,?,?,?,?,?)');
for (let i = 1; i <= 1000; i++) ins.run('app', 'user', i, 1, '5f0c2a9e-1d2b-4c3e-9f7a-0b1c2d3e4f5a', 'notes', 'update', `row-${i}`, '2026-12-01T07:12:00.123Z', JSON.stringify({ iv: 'aXZhYmNkZWY=', ct: 'Y3Q'.repeat(60) }));
const a = db.prepare('select seq, key_id, device_id, tbl, op, row_id, ts, data from e where app_id = ? and user_id = ? and seq > ? order by seq limit ?').raw(true);
const b = db.prepare(`select '{"seq":' || seq || ',"key_id":' || key_id || ',"device_id":' || json_quote(device_id) || ',"table":' || json_quote(tbl) || ',"op":' || json_quote(op) || ',"row_id":' || json_quote(row_id) || ',"timestamp":' || json_quote(ts) || ',"data":' || coalesce(data, 'null') || '}' from e where app_id = ? and user_id = ? and seq > ? order by seq limit ?`).pluck();
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const text = (s) => s === null ? 'null' : PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
const mk = new Function('v', 'return {seq: v[0], key_id: v[1], device_id: v[2], tbl: v[3], op: v[4], row_id: v[5], ts: v[6], data: v[7]}');
function viaRows(n) {
  const rows = a.all('app', 'user', 990 - n, n + 1).map(mk);
  let out = '{"entries":[';
  for (let i = 0; i < Math.min(n, rows.length); i++) { const e = rows[i]; out += `${i === 0 ? '' : ','}{"seq":${e.seq},"key_id":${e.key_id},"device_id":${text(e.device_id)},"table":${text(e.tbl)},"op":${text(e.op)},"row_id":${text(e.row_id)},"timestamp":${text(e.ts)},"data":${e.data ?? 'null'}}`; }
  return out + ']}';
}
function viaText(n) {
  const rows = b.all('app', 'user', 990 - n, n + 1);
  return '{"entries":[' + (rows.length > n ? rows.slice(0, n) : rows).join(',') + ']}';
}
console.log(viaRows(10) === viaText(10), viaRows(500) === viaText(500));
const res = { rows: { 10: [], 500: [] }, text: { 10: [], 500: [] } };
for (let round = 0; round < 6; round++) for (const n of [10, 500]) for (const [name, f] of [['rows', viaRows], ['text', viaText]]) {
  const N = n === 10 ? 30000 : 600; const t = process.hrtime.bigint(); for (let i = 0; i < N; i++) f(n);
  res[name][n].push(Number(process.hrtime.bigint() - t) / N / 1000);
}
const med = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1].toFixed(1);
for (const n of [10, 500]) console.log(n, 'rows', med(res.rows[n]), 'text', med(res.text[n]));
