import module from 'node:module';

// Node 22.1+ can keep V8's compiled code of the modules it loads on disk (in the temp directory), so later
// starts skip compiling them; Node 20 has no such function and compiles as before. Imported first by the
// CLI, so every module loaded after it (the server's, all loaded on demand) is cached.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
