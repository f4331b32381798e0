#!/bin/sh
# Builds the Rust reference tool set: ./build.sh OUTDIR writes
# OUTDIR/reference.wasm with Debian's Rust toolchain — rustc and cargo,
# libstd-rust-dev-wasm32 (target wasm32-wasi) and the crates serde,
# serde_derive and serde_json from /usr/share/cargo/registry (no network):
#
#   apt-get install rustc cargo libstd-rust-dev-wasm32 \
#     librust-serde-dev librust-serde-derive-dev librust-serde-json-dev
#
# Exits 3 when that toolchain is missing. It calls /usr/bin/cargo and
# /usr/bin/rustc by path, so a rustup toolchain earlier on the PATH is not
# used. The build is kept between runs in CARGO_TARGET_DIR, by default
# $XDG_CACHE_HOME/wasmcp/reference-rust (~/.cache/...), so that every test
# that builds the set after the first finds it built.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sdk=$here/../../../guest-sdk/rust
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
missing=
[ -x /usr/bin/cargo ] || missing="$missing cargo"
[ -x /usr/bin/rustc ] || missing="$missing rustc"
[ -d /usr/lib/rustlib/wasm32-wasi/lib ] || missing="$missing libstd-rust-dev-wasm32"
for c in serde serde_derive serde_json; do
	ls -d /usr/share/cargo/registry/"$c"-1.* >/dev/null 2>&1 || missing="$missing librust-$(echo "$c" | tr _ -)-dev"
done
if [ -n "$missing" ]; then
	echo "build.sh: Debian's Rust toolchain is needed to build the Rust reference tool set; missing:$missing" >&2
	echo "  apt-get install rustc cargo libstd-rust-dev-wasm32 librust-serde-dev librust-serde-derive-dev librust-serde-json-dev" >&2
	exit 3
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)/reference.wasm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${CARGO_TARGET_DIR:-}" ]; then
	if [ -n "${XDG_CACHE_HOME:-}" ]; then
		CARGO_TARGET_DIR=$XDG_CACHE_HOME/wasmcp/reference-rust
	elif [ -n "${HOME:-}" ]; then
		CARGO_TARGET_DIR=$HOME/.cache/wasmcp/reference-rust
	else
		CARGO_TARGET_DIR=$work/target
	fi
fi
export CARGO_TARGET_DIR
# A CARGO_HOME of its own: no user configuration, no registry cache.
CARGO_HOME=$work/cargo-home RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
	/usr/bin/cargo --config "$sdk/debian-cargo.toml" build --quiet --release --target wasm32-wasi \
	--manifest-path "$here/Cargo.toml"
cp "$CARGO_TARGET_DIR/wasm32-wasi/release/reference.wasm" "$out"
