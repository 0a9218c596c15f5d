"""The Streamlit app: its entry point, its pages (views/: a folder named pages/ beside the entry point would be listed
by Streamlit as pages of their own, run without the entry point) and their helpers."""
