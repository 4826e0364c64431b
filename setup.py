"""wikiorigin: culture-specific QA datasets from Wikipedia and Wikidata dumps."""

import re
from pathlib import Path

from setuptools import Extension, find_namespace_packages, setup

here = Path(__file__).parent
# read, not imported: the package's __init__ imports its own modules
version = {"__version__": re.search(r'^__version__ = "([^"]+)"',
                                   (here / "wikiorigin" / "__init__.py").read_text(), re.M)[1]}

setup(
    name="wikiorigin",
    version=version["__version__"],
    description=(
        "Build culture-specific QA datasets from Wikipedia and Wikidata dumps "
        "and evaluate local language models on them"
    ),
    long_description=(here / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.10",
    packages=find_namespace_packages(include=["wikiorigin", "wikiorigin.*"]),
    package_data={"wikiorigin": ["data/wikimedia-config/*", "data/un/*", "data/labels/*", "data/instructions/*", "review/static/*"]},
    install_requires=[
        "pyarrow>=19",
        "numpy>=1.24",
        "duckdb>=1.0",
        "mwxml>=0.3.3",
        "isal>=1.6",
        "indexed_bzip2>=1.5",
        "zstandard>=0.22",
        "tqdm>=4.60",
        "babel>=2.12",
        "mwparserfromhell>=0.6",
        "SPARQLWrapper>=2",
        "openai>=1.40",
        "jsonschema>=4",
        "joblib>=1.3",
        "matplotlib>=3.7",  # the evaluators' plots
        "Unidecode>=1.3",  # romanized matching of free-form answers
        "rapidfuzz>=3",  # edit distances (free-form answers, region labels)
    ],
    extras_require={
        # torch is pinned by the Makefile for CPU test machines; on a GPU machine install
        # the torch build that fits it before this extra.
        "eval": ["torch>=2.1", "transformers>=4.40", "scipy>=1.10", "statsmodels>=0.14", "sentencepiece>=0.2",
                 "tiktoken>=0.6"],
        "dask": ["dask[distributed]>=2024.1"],
        # wikiorigin review: the local web app, its server, and the annotators' agreement (kappa)
        "review": ["starlette>=0.37", "uvicorn>=0.29", "statsmodels>=0.14"],
        # lm-evaluation-harness: the parity tests run its hf model (tests/evaluators/test_lmeval_parity.py);
        # they pin down 0.4's behaviour, so a new minor version is checked before it is allowed
        "test": ["pytest>=7", "nbclient>=0.9", "nbformat>=5", "ipykernel>=6",
                 "datasets>=2.19", "sacrebleu>=2.3", "lm_eval[hf]>=0.4.13,<0.5",
                 "pdoc>=14",  # pdoc: the API reference (tests/test_api_docs.py, make docs)
                 "selenium>=4.10"],  # the review page in a real browser (tests/review/test_browser.py)
        "bench": ["pandas>=2", "dask[distributed]>=2024.1", "lm_eval[hf]>=0.4.13,<0.5"],  # bench_eval against lm-eval
    },
    # The compiled core of the page-creation scan. Optional: without a C compiler the build
    # goes on and the scan uses its pure-Python path (same results, several times slower).
    ext_modules=[
        Extension(
            "wikiorigin.dumps._scanblock",
            ["wikiorigin/dumps/_scanblock.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ],
    entry_points={"console_scripts": ["wikiorigin=wikiorigin.cli:main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Topic :: Text Processing :: Linguistic",
    ],
)
