// The mkt version (also the marketplace API version); a test keeps it equal to package.json.
export const VERSION = '0.16.0';
