process.on('SIGINT', () => process.exit(0));
await import('./server.ts');
