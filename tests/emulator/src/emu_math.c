/*
 * emu_math.c - the 9.x layout's libopapi_math.so: a placeholder dependency of libopapi_nn.so
 * (in CANN 9.x libopapi_nn.so depends on libopapi_math.so). It exports one dummy function.
 */
#define EMU_EXPORT __attribute__((visibility("default")))

EMU_EXPORT int emu_opapi_math_placeholder(void) { return 0; }
