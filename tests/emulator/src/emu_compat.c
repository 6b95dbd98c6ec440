/*
 * emu_compat.c - the 9.x layout's compatibility libascendcl.so.
 *
 * In the "9.x" layout the runtime is libacl_rt.so and libascendcl.so is only kept for
 * compatibility. The emulator's compat library defines no acl function of its own: it has a
 * DT_NEEDED entry on libacl_rt.so, so dlsym() through its handle finds every runtime symbol
 * (and the state stays in ONE copy of the runtime). Like every emulator library it has no rpath:
 * libacl_rt.so must already be loaded (preloaded by absolute path, RTLD_GLOBAL) or findable.
 */
#define EMU_EXPORT __attribute__((visibility("default")))

EMU_EXPORT int emu_compat_ascendcl(void) { return 1; }
