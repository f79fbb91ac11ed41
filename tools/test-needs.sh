#!/usr/bin/env bash
# What `make test` needs besides the venv: OpenSSH's sshd, ssh and ssh-keygen for the multi-client tests (they
# start sshd instances on loopback ports), and the seed documents for the reference-table tests. Installs sshd
# where it can (root with apt-get, as CI runs; or passwordless sudo in CI), else says the one command to run;
# never fails: a missing piece only skips the tests that need it, and pytest -rs lists them again at the end.
# SSHD=PATH checks that file instead of sshd on PATH or /usr/sbin/sshd (for the tests of this script).
# Also installs chromium (the site's browser test) the same way.
set -uo pipefail
cd "$(dirname "$0")/.."

have_sshd() {
    if [ -n "${SSHD:-}" ]; then
        [ -x "$SSHD" ]
    else
        { command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ]; } && command -v ssh-keygen >/dev/null 2>&1 && command -v ssh >/dev/null 2>&1
    fi
}

PACKAGES="openssh-server openssh-client"
if ! have_sshd; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "make test: installing $PACKAGES (the multi-client tests run sshd on loopback ports)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES \
            || echo "make test: could not install $PACKAGES: the multi-client tests will be skipped"
    elif [ -n "${CI:-}" ] && command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        echo "make test: installing $PACKAGES with sudo (the multi-client tests run sshd on loopback ports)"
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES \
            || echo "make test: could not install $PACKAGES: the multi-client tests will be skipped"
    else
        echo "make test: no sshd, so the multi-client tests will be skipped; to run them first:"
        echo "    sudo apt-get install -y $PACKAGES"
    fi
fi

# headless Chromium for the site's tests (tests/integration/test_site_integration.py loads its pages)
# CHROMIUM=PATH checks that file instead (for the tests of this script)
have_chromium() {
    if [ -n "${CHROMIUM:-}" ]; then
        [ -x "$CHROMIUM" ]
    else
        command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1
    fi
}
if ! have_chromium; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "make test: installing chromium (the site's tests load its pages in headless Chromium)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
            || echo "make test: could not install chromium: the site's browser test will be skipped"
    elif [ -n "${CI:-}" ] && command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        echo "make test: installing chromium with sudo (the site's tests load its pages in headless Chromium)"
        sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium \
            || echo "make test: could not install chromium: the site's browser test will be skipped"
    else
        echo "make test: no chromium, so the site's browser test will be skipped; to run it first:"
        echo "    sudo apt-get install -y chromium"
    fi
fi

# the seed documents: $YCSB_RUNNER_SEEDS, else shared/seeds beside the checkout or one of its parents
# (tests/unit/test_reference.py looks in the same places)
seeds="${YCSB_RUNNER_SEEDS:-}"
if [ -z "$seeds" ]; then
    dir="$(pwd)"
    while :; do
        if compgen -G "$dir/shared/seeds/00[0-4]_*.txt" >/dev/null; then
            seeds="$dir/shared/seeds"
            break
        fi
        [ "$dir" = / ] && break
        dir="$(dirname "$dir")"
    done
fi
if [ -z "$seeds" ] || ! compgen -G "$seeds/00[0-4]_*.txt" >/dev/null; then
    echo "make test: seed documents not found (000_*.txt to 004_*.txt in ${seeds:-shared/seeds beside the checkout or a parent folder}), so the reference-table tests will be skipped; to run them:"
    echo "    YCSB_RUNNER_SEEDS=/path/to/shared/seeds make test"
fi
exit 0
