/*
 * emu_ops_custom_add.c - the custom package's "Add" op (build_custom_opp(..., ops=(..., "Add"))):
 * a custom op that reuses the built-in op name Add, with the generated signature
 * aclnnAdd(x1, x2, y). Same code as AddCustom (emu_ops_custom.c), built as a separate object so
 * that a package exports aclnnAdd only when asked to.
 */
#define EMU_CUSTOM_ADD
#include "emu_ops_custom.c"
