"""The Streamlit app: its entry point, its pages (pages/) and their helpers."""
