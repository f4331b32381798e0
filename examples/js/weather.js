// An example tool as a plain JavaScript file: drop it into the tools
// directory (`wasmcp serve --tools DIR`) and it is a tool, with no build.
// `fetch` goes through the host: grant the destination in
// weather.policy.toml ([http] allow = ["https://api.open-meteo.com"]).
const { McpServer } = require("wasmcp");

const server = new McpServer({ name: "weather", version: "1.0.0" });

server.registerTool("forecast", {
	description: "Today's maximum temperature at a latitude and longitude.",
	inputSchema: {
		type: "object",
		properties: { latitude: { type: "number" }, longitude: { type: "number" } },
		required: ["latitude", "longitude"],
	},
}, async ({ latitude, longitude }, ctx) => {
	ctx.log("info", { latitude, longitude });
	const url = `https://api.open-meteo.com/v1/forecast?latitude=${latitude}&longitude=${longitude}&daily=temperature_2m_max&forecast_days=1`;
	const resp = await fetch(url);
	if (!resp.ok) throw new Error(`open-meteo answered ${resp.status}`);
	const data = await resp.json();
	return { maxCelsius: data.daily.temperature_2m_max[0] };
});

server.registerTool("roll", {
	description: "Rolls an n-sided die (randomness from the host, fresh in every call).",
	inputSchema: { type: "object", properties: { sides: { type: "integer", minimum: 2 } }, required: ["sides"] },
}, ({ sides }) => {
	const [x] = crypto.getRandomValues(new Uint32Array(1));
	return String(1 + (x % sides));
});
