# SPDX-License-Identifier: MIT
# fs-verity (lib/fsverity).  libfsverity (libfsverity-dev, fsverity-utils)
# is the oracle of tests/unit/test_fsverity*.c, linked into the test binary
# only.  `make check` requires it (scripts/configure.sh); object goals
# without it (the cross builds) compile those files' oracle tests out, and
# the golden vectors in testdata/fsverity still run.

ifeq ($(HAVE_LIBFSVERITY),1)
TEST_LIBS += $(LIBFSVERITY_LIBS)
$(O)/tests/unit/test_fsverity.o: override CPPFLAGS += -DDMT_HAVE_LIBFSVERITY
$(O)/tests/unit/test_fsverity_sparse.o: override CPPFLAGS += -DDMT_HAVE_LIBFSVERITY
endif
