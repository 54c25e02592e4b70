# Shared by scripts/test and scripts/demo (sourced, not run): installs what rwtop's sandbox needs
# when it is missing. On Debian/Ubuntu that is apt-get (with sudo when not root); elsewhere it
# says what to install and fails, because the sandbox cannot run without a server.
#
# Usage: install_deps CALLER REASON [EXTRA_PACKAGE...]
#   CALLER  names the script in messages (scripts/test, scripts/demo)
#   REASON  what the packages are needed by, for the message
#   EXTRA   more packages the caller needs: percona-toolkit (checked by pt-heartbeat), tmux,
#           haproxy, openssl, prometheus (promtool and the server, for the rules and
#           dashboard tests), prometheus-alertmanager (amtool and the server, for the shipped
#           inhibition's tests), chromium (headless, for the DDL-window report's rendered charts),
#           make (jemalloc, rwtop's allocator, is built from C with configure and make),
#           man-db (the package test reads the man page with `man -l`), dpkg-dev (cargo-deb
#           works out the package's dependencies with dpkg-shlibdeps), lintian (the package
#           test checks the .deb with it), galera-4, mariadb-backup and socat (the Galera
#           sandbox: its provider, and the state transfer that joins a member)

# Found on PATH, or in /usr/sbin, where Debian puts mariadbd (outside a normal user's PATH).
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }

install_deps() {
  local caller=$1 reason=$2
  shift 2
  local missing=()
  have mariadbd || have mysqld || missing+=(mariadb-server)
  have mariadb || have mysql || missing+=(mariadb-client)
  local extra
  for extra in "$@"; do
    case "$extra" in
      percona-toolkit) have pt-heartbeat || missing+=(percona-toolkit) ;;
      tmux) have tmux || missing+=(tmux) ;;
      haproxy) have haproxy || missing+=(haproxy) ;;
      openssl) have openssl || missing+=(openssl) ;;
      prometheus) { have promtool && have prometheus; } || missing+=(prometheus) ;;
      prometheus-alertmanager)
        { have amtool && { have alertmanager || have prometheus-alertmanager; }; } ||
          missing+=(prometheus-alertmanager) ;;
      chromium) have chromium || missing+=(chromium) ;;
      make) have make || missing+=(make) ;;
      man-db) have man || missing+=(man-db) ;;
      dpkg-dev) have dpkg-shlibdeps || missing+=(dpkg-dev) ;;
      lintian) have lintian || missing+=(lintian) ;;
      galera-4) [ -f /usr/lib/galera/libgalera_smm.so ] || missing+=(galera-4) ;;
      mariadb-backup) { have mariadb-backup || have mariabackup; } || missing+=(mariadb-backup) ;;
      socat) have socat || missing+=(socat) ;;
      *) echo "install_deps: unknown package $extra" >&2; return 2 ;;
    esac
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  if command -v apt-get >/dev/null 2>&1; then
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "$caller: installing ${missing[*]} ($reason)"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    # Debian starts the packaged Prometheus (and its node exporter); the tests start their own.
    if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v service >/dev/null 2>&1; then
      $sudo service prometheus stop >/dev/null 2>&1 || true
      $sudo service prometheus-node-exporter stop >/dev/null 2>&1 || true
    fi
    # The same for the packaged Alertmanager: the inhibition test starts its own.
    if [[ " ${missing[*]} " == *" prometheus-alertmanager "* ]] && command -v service >/dev/null 2>&1; then
      $sudo service prometheus-alertmanager stop >/dev/null 2>&1 || true
    fi
  else
    echo "$caller: rwtop's sandbox needs a MariaDB server and client (mariadbd, mariadb-install-db," >&2
    echo "mariadb)${*:+ and $*}. Install ${missing[*]} with your package manager." >&2
    return 1
  fi
}
