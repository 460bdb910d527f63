"""The agent's tools. Import from the submodules: `.base`, `.registry`, `.filesystem`, `.setup`."""
