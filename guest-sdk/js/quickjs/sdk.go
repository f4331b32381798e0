package quickjs

import _ "embed"

// SDK is sdk.js: wasmcp's stand-in for the server API of the official
// TypeScript SDK (McpServer with zod schemas, ResourceTemplate,
// StdioServerTransport, McpError), written over the runner's own
// McpServer. A script bundled with its node_modules gets it for the
// import paths in SDKPaths, whatever node_modules holds.
//
//go:embed sdk.js
var SDK string

// SDKPaths are the import paths of the official TypeScript SDK that a
// bundle resolves to SDK.
var SDKPaths = []string{
	"@modelcontextprotocol/sdk/server/mcp.js",
	"@modelcontextprotocol/sdk/server/stdio.js",
	"@modelcontextprotocol/sdk/types.js",
	"@modelcontextprotocol/server",
}

// SDKAliases maps each of SDKPaths to SDK.
func SDKAliases() map[string]string {
	m := make(map[string]string, len(SDKPaths))
	for _, p := range SDKPaths {
		m[p] = SDK
	}
	return m
}
