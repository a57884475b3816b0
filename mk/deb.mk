# The Debian package (design.md §10) and its proof on a booted host.
#
#   make deb               build/arps_<version>_<arch>.deb with dpkg-buildpackage
#                          (debian/, debhelper, dh_installsystemd), then lintian
#                          (no errors allowed)
#   make test-production   tools/test-production.sh: the .deb installed and driven
#                          over HTTPS on a booted Debian 12 root (systemd-nspawn)
#
# The package is built in a copy of the tree (build/deb/src: the files git
# knows plus the embedding model), so dpkg-buildpackage writes nothing
# outside build/.

DEB_VERSION := $(shell dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null)
DEB         := build/arps_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_SRC     := build/deb/src

.PHONY: deb deb-deps test-production

deb-deps:
	@tools/dev.sh deps deb

deb: $(DEB)

$(DEB): $(MODEL_BIN) $(shell git ls-files 2>/dev/null) $(wildcard debian/*) | deb-deps
	rm -rf build/deb && mkdir -p $(DEB_SRC)/build/model $(DEB_SRC)/build/cache
	git ls-files -z --cached --others --exclude-standard | \
	    xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
	    xargs -0 cp --parents -t $(DEB_SRC)
	cp $(MODEL_BIN) $(DEB_SRC)/$(MODEL_BIN) && touch $(DEB_SRC)/$(MODEL_BIN)
	cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc -j2 > ../build.log 2>&1 || \
	    { tail -40 ../build.log; exit 1; }
	mv build/deb/arps_$(DEB_VERSION)_$(DEB_ARCH).deb $@
	lintian --fail-on error $@ || \
	    { rm -f $@; echo "lintian found errors in the package"; exit 1; }
	@echo "deb: $@ ($$(du -k $@ | cut -f1) KiB), lintian: no errors"

test-production: $(DEB)
	@tools/test-production.sh $(DEB)
