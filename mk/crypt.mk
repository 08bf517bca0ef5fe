# SPDX-License-Identifier: MIT
# lib/crypt (dm-crypt engine, LUKS2): its objects join libdmt.a, Argon2
# comes from libargon2 (the library cryptsetup uses), and the tests use
# libcryptsetup as their oracle.
CRYPT_SRCS := $(filter-out $(LIB_SRCS),$(wildcard lib/crypt/*.c))
ifeq ($(ARCH),x86_64)
CRYPT_SRCS += $(filter-out $(LIB_SRCS),$(wildcard lib/crypt/arch/x86_*.c))
endif
# our own AES-XTS and AES-CBC: VAES on 512-bit vectors, only in this file
ISA_FLAGS_x86_aes_vaes := -maes -msse4.1 -mavx512f -mavx512bw -mavx512vl \
	-mvaes -mvpclmulqdq
CRYPT_OBJS := $(patsubst %.c,$(O)/%.o,$(CRYPT_SRCS))
LIB_OBJS += $(CRYPT_OBJS)
$(LIB): $(CRYPT_OBJS)

# Where a sysroot (cross builds) lacks them, the code leaves out Argon2
# and the tests their libcryptsetup oracle (__has_include), so nothing
# links against a library that is not there.
CRYPT_LIBS := $(shell $(PKG_CONFIG) --libs libargon2 2>/dev/null)
CRYPT_TEST_LIBS := $(shell $(PKG_CONFIG) --libs libcryptsetup 2>/dev/null)
DEP_LIBS += $(CRYPT_LIBS)
TEST_LIBS += $(CRYPT_TEST_LIBS)

-include $(CRYPT_OBJS:.o=.d)
