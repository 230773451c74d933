"""One pair as people debug it: before and after aligned, findings anchored where they point,
for the report's pair pages and `frayproof-audit show`."""
