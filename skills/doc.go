// Package skills builds Agent Skills for the MCP Skills extension
// (SEP-2640) from their files: it checks the skill's name and file paths,
// parses the YAML frontmatter of its SKILL.md into the JSON object clients
// compare against, computes every file's SHA-256 digest and size, and
// enforces the extension's limits (512 files and 16 MiB per skill). Skills
// come from a directory of skills (LoadDir) or from a module's description
// (New). The package knows nothing of MCP eras or transports: protocol
// serves what it builds.
package skills
