// The inline worker thread's entry: TypeScript through tsx, registered in this thread, then the thread's
// module (thread.ts). A worker thread does not inherit the hooks its parent registered with tsx's API.
import { register } from 'tsx/esm/api';

register();
await import('./thread.ts');
