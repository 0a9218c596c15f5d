"""What a user sends: the report, bundles, anonymization and chart images."""
