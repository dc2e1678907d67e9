// Placeholder entry point; replaced by the backend plugin interface.
