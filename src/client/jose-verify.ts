// The two pieces of jose the offline license check needs, behind one module: the build bundles
// this file into a single script (scripts/bundle-cli.mjs), since loading jose's many ESM files
// one by one costs `mkt license check` more start-up time than the whole check.
export { jwtVerify } from 'jose/jwt/verify';
export { decodeProtectedHeader } from 'jose/decode/protected_header';
