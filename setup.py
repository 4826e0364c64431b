"""The optional compiled cores: the page-creation scan's and the Wikidata pass's line screen;
everything else is in pyproject.toml.

Without a C compiler the build goes on (``optional=True``) and each uses its pure-Python path:
the same results, several times slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "wikiorigin.dumps._scanblock",
            ["wikiorigin/dumps/_scanblock.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "wikiorigin.dumps._screen",
            ["wikiorigin/dumps/_screen.c"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ],
)
