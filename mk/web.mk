# The console (web/, design.md §12) and its browser tests.
#   make browser-deps   playwright-core from the npm registry into build/browser
#                       (exact versions of tests/browser/package-lock.json)
#   make test-browser   the browser suite against a fresh dev stack
#   make install        also installs web/ (install-web below)

.PHONY: browser-deps test-browser install-web

build/browser/.installed: tests/browser/package.json tests/browser/package-lock.json
	@mkdir -p $(@D)
	cp tests/browser/package.json tests/browser/package-lock.json $(@D)/
	cd $(@D) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

browser-deps: build/browser/.installed

test-browser:
	@tools/dev.sh test browser

# The console's files, served by nginx/arps.conf from /usr/share/arps/web:
# $(DATADIR)/web when the Makefile defines DATADIR (its install then rewrites
# that root in the installed site), else /usr/share/arps/web as the site says.
WEB_DATADIR = $(if $(DATADIR),$(DATADIR),/usr/share/arps)
WEB_FILES := $(sort $(wildcard web/*.html web/*.css web/*.svg web/js/*.js))

install: install-web
install-web:
	install -d $(DESTDIR)$(WEB_DATADIR)/web/js
	set -e; for f in $(WEB_FILES); do install -m 0644 $$f $(DESTDIR)$(WEB_DATADIR)/$$f; done
