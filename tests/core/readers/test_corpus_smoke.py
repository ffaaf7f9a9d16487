from corpus import corpus


def test_corpus_helper_finds_a_file() -> None:
    assert corpus("otlp-json/opentelemetry-proto_examples_trace.json").stat().st_size > 0
