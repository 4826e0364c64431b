"""The optional compiled core of the page-creation scan; everything else is in pyproject.toml.

Without a C compiler the build goes on (``optional=True``) and the scan uses its pure-Python
path: the same results, several times slower.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "wikiorigin.dumps._scanblock",
            ["wikiorigin/dumps/_scanblock.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ],
)
