// A stand-in for the store's SQLite threads (thread-serve.mjs's protocol) for test/unit/sqlite-thread:
// says it is ready, then answers each request on `workerData.answers` and, for `{ exit: true }`,
// ends the thread right after answering, with exit code 3.
import { parentPort, workerData } from 'node:worker_threads';

parentPort.on('message', (message) => {
  workerData.answers.postMessage({ id: message.id, value: message.value });
  if (message.exit) process.exit(3);
});
parentPort.postMessage({ ready: true });
