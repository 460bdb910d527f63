"""The machinery behind `architect_nb.tools.search`: file lists, grep backends, the regex worker, output."""
