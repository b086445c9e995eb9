// A worker thread's entry: TypeScript through tsx, registered in this thread, then the thread's module:
// the inline worker (thread.ts) unless `workerData.entry` names another (the intake writer). A worker
// thread does not inherit the hooks its parent registered with tsx's API.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData?.entry ?? './thread.ts');
