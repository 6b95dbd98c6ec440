/*
 * Build-time stand-in for the toolkit's include/aclnn/aclnn_base.h, used only while compiling
 * the emulator: its sources get every public type and prototype from the project's headers/
 * through emu_internal.h (which must come first). The toolkit the build installs has the real
 * wrappers instead (build.py writes include/acl and include/aclnn from headers/).
 */
#ifndef EMU_INTERNAL_H
#error "include emu_internal.h before an aclnnop header"
#endif
