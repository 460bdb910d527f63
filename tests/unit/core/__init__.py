"""What the whole package shares: config, paths, redaction, logging, parsing, the public API, the
package layout and the docs' examples."""
