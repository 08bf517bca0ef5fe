# SPDX-License-Identifier: MIT
# fs-verity (lib/fsverity).  libfsverity (libfsverity-dev, fsverity-utils)
# is the oracle of tests/unit/test_fsverity*.c: linked into the test binary
# only, and only where it is installed (the oracle tests then skip, and
# say so, and the golden vectors in testdata/fsverity still run).

HAVE_LIBFSVERITY := $(shell $(PKG_CONFIG) --exists libfsverity 2>/dev/null && echo 1)
ifeq ($(HAVE_LIBFSVERITY),1)
TEST_LIBS += $(shell $(PKG_CONFIG) --libs libfsverity)
$(O)/tests/unit/test_fsverity.o: override CPPFLAGS += -DDMT_HAVE_LIBFSVERITY
$(O)/tests/unit/test_fsverity_sparse.o: override CPPFLAGS += -DDMT_HAVE_LIBFSVERITY
endif
