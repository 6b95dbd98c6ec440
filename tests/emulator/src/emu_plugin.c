/*
 * emu_plugin.c - the libraries the real runtime opens by bare name at run time (see emu_boot.c):
 * linked as libruntime_v100.so, libruntime_v200.so (the runtime implementations, entry point
 * ConstructRuntimeImpl) and libtsdclient.so (entry point TsdOpen). No code beyond the entry
 * points; what matters is whether the dynamic loader can find them.
 */
#define EMU_EXPORT __attribute__((visibility("default")))

static int g_instance;

EMU_EXPORT void *ConstructRuntimeImpl(void) { return &g_instance; }
EMU_EXPORT void DestructorRuntimeImpl(void *rt) { (void)rt; }
EMU_EXPORT int TsdOpen(unsigned int deviceId, unsigned int rankSize) { (void)deviceId, (void)rankSize; return 0; }
