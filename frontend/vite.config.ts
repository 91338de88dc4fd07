import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// The FastAPI backend serves dist/ at `/` (index.html for unknown non-API paths),
// so the build uses base `/`; in development Vite proxies the API to it instead.
export default defineConfig({
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    rolldownOptions: {
      output: {
        // Libraries change far less often than the app: separate chunks stay cached
        // across UI releases, and no single chunk trips the 500 kB warning.
        codeSplitting: {
          groups: [
            { name: 'react', test: /node_modules[\\/](react|react-dom|scheduler)[\\/]/ },
            // Recharts and its dependencies are only needed by the lazily loaded query
            // detail view: kept out of the first load.
            {
              name: 'charts',
              test: /node_modules[\\/](recharts|d3-[a-z-]+|victory-vendor|@reduxjs|redux|redux-thunk|reselect|immer|es-toolkit|eventemitter3|decimal\.js-light|tiny-invariant|internmap|react-redux|use-sync-external-store)[\\/]/,
            },
            { name: 'vendor', test: /node_modules[\\/]/ },
          ],
        },
      },
    },
  },
  server: {
    proxy: {
      '/api': 'http://127.0.0.1:8000',
    },
  },
  test: {
    include: ['src/**/*.test.{ts,tsx}'],
    environment: 'node',
  },
});
