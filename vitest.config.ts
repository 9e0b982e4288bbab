// Test runner configuration: real servers and git make some tests slow, and a loaded CI machine
// makes them several times slower (a 30 s test took 85 s beside four busy cores), so allow time.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One real PostgreSQL server for the run (or MKT_TEST_DATABASE_URL's).
    globalSetup: ['test/helpers/pg-global.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
