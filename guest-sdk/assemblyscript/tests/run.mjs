// Runs a WASI command module (a test built by npm test) under Node's WASI
// and exits with its exit code.
import { readFile } from "node:fs/promises";
import { WASI } from "node:wasi";
import process from "node:process";

const wasi = new WASI({ version: "preview1", args: ["test"], env: {}, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(process.argv[2]));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
