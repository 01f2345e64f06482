"""JobSet API types, one package per version as upstream ``api/jobset/<version>``."""
