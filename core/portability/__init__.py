"""Moving memory in and out of the service: readers of older stores' exports (formats/), the import service that
writes what they read (importer.py), and the lossless native export/import (native.py). docs/migration.md."""
