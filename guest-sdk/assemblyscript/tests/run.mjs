// Runs a WASI command module (a test built by test.sh) under Node's WASI
// and exits with its exit code: node run.mjs MODULE.wasm [STDIN-FILE].
import { openSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";
import process from "node:process";

const options = { version: "preview1", args: ["test"], env: {}, returnOnExit: true };
if (process.argv[3]) options.stdin = openSync(process.argv[3], "r");
const wasi = new WASI(options);
const module = await WebAssembly.compile(await readFile(process.argv[2]));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
