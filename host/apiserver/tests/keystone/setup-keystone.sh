#!/bin/sh
# Sets up Debian's python3-keystone on sqlite in $1 and serves its public WSGI app on
# 127.0.0.1:$2 until process $4 exits. The admin user is `admin` / $3 in project `admin`,
# domain Default (as `keystone-manage bootstrap` leaves a Keystone).
set -eu
dir=$1; port=$2; password=$3; watch=$4
py=/usr/bin/python3
mkdir -p "$dir/fernet" "$dir/credential" "$dir/log"
cat > "$dir/keystone.conf" <<CONF
[DEFAULT]
log_file = $dir/log/keystone.log
[database]
connection = sqlite:///$dir/keystone.db
[fernet_tokens]
key_repository = $dir/fernet
[fernet_receipts]
key_repository = $dir/fernet
[credential]
key_repository = $dir/credential
[token]
provider = fernet
CONF
manage() { $py /usr/bin/keystone-manage --config-file "$dir/keystone.conf" "$@"; }
manage db_sync
# WAL: the WSGI app's reader and writer connections do not lock each other out.
$py -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode=WAL')" "$dir/keystone.db"
manage fernet_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
manage credential_setup --keystone-user "$(id -un)" --keystone-group "$(id -gn)"
manage bootstrap --bootstrap-password "$password" \
  --bootstrap-admin-url "http://127.0.0.1:$port/v3" \
  --bootstrap-internal-url "http://127.0.0.1:$port/v3" \
  --bootstrap-public-url "http://127.0.0.1:$port/v3" \
  --bootstrap-region-id RegionOne
export OS_KEYSTONE_CONFIG_FILES="$dir/keystone.conf"
$py /usr/bin/keystone-wsgi-public --host 127.0.0.1 --port "$port" &
server=$!
# Once serving, the directory goes with the server (a failed setup leaves it for its log).
trap 'kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
while kill -0 "$watch" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 1; done
