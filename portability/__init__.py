"""Moving memory in and out of the service and across embedding models: readers of older stores' exports
(formats/), the import that writes what they read (services/importer.py), the lossless native export and import
(native_rows.py, selectors/native_export.py, services/native_import.py) and re-embedding into a new embedding space
(services/reembed.py); the commands import_memories, export_memories and reembed. It writes through each app's
services. docs/migration.md, docs/operations/reference.md."""
