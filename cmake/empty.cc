// Stands in for a folder that has no sources yet, so its object library is never empty.
