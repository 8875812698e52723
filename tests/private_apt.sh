# A private apt configuration, for fetching Debian packages or sources without touching the
# machine's apt sources or state (sourced by tests/qemu10.sh and tests/c2c/plugin_header.sh).
#
# private_apt DIR: an empty DIR with apt's folders and DIR/apt.conf, whose every option that
# would make apt read or write the machine's own state points into DIR. The caller writes
# DIR/etc/sources.list, then runs `apt-get -c DIR/apt.conf ...`.
private_apt() {
	rm -rf "$1" && mkdir -p "$1/etc/sources.list.d" "$1/etc/preferences.d" "$1/lists/partial" \
		"$1/cache/archives/partial" || return 1
	: >"$1/status"
	cat >"$1/apt.conf" <<CONF
Dir::Etc::SourceList "$1/etc/sources.list";
Dir::Etc::SourceParts "$1/etc/sources.list.d";
Dir::Etc::Preferences "$1/etc/preferences";
Dir::Etc::PreferencesParts "$1/etc/preferences.d";
Dir::State::Lists "$1/lists";
Dir::State::status "$1/status";
Dir::Cache "$1/cache";
APT::Sandbox::User "root";
Debug::NoLocking "1";
CONF
}
