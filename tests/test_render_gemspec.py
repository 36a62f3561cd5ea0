"""A gem theme's runtime dependencies from its gemspec's text (render/read/gemspec.py),
found beside the theme (watch/theme.py)."""

from __future__ import annotations

from pathlib import Path

from deploybot.render.read.gemspec import runtime_dependencies
from deploybot.watch.theme import folder_gemspec

# The shape RubyGems writes for an installed gem (Debian's minima-2.5.1.gemspec): the
# runtime block, then every dependency again as add_dependency for old RubyGems.
INSTALLED = """
  if s.respond_to? :add_runtime_dependency then
    s.add_runtime_dependency(%q<jekyll>.freeze, [">= 3.5", "< 5.0"])
    s.add_runtime_dependency(%q<jekyll-feed>.freeze, ["~> 0.9"])
    s.add_runtime_dependency(%q<jekyll-seo-tag>.freeze, ["~> 2.1"])
    s.add_development_dependency(%q<bundler>.freeze, [">= 1.15"])
  else
    s.add_dependency(%q<jekyll>.freeze, [">= 3.5", "< 5.0"])
    s.add_dependency(%q<jekyll-feed>.freeze, ["~> 0.9"])
    s.add_dependency(%q<jekyll-seo-tag>.freeze, ["~> 2.1"])
    s.add_dependency(%q<bundler>.freeze, [">= 1.15"])
  end
"""

# The shape of a theme's own minima.gemspec in its repository.
SOURCE = """
  spec.add_runtime_dependency "jekyll", ">= 3.5", "< 5.0"
  spec.add_runtime_dependency 'jekyll-feed', "~> 0.9"
  spec.add_dependency("jekyll-seo-tag", "~> 2.1")
  spec.add_development_dependency "bundler"
  # spec.files = `git ls-files`  (Ruby is never run)
"""


def test_an_installed_gemspec_gives_its_runtime_dependencies_only() -> None:
    assert runtime_dependencies(INSTALLED) == ("jekyll-feed", "jekyll-seo-tag")


def test_a_source_gemspec_gives_its_runtime_dependencies_only() -> None:
    assert runtime_dependencies(SOURCE) == ("jekyll-feed", "jekyll-seo-tag")
    assert runtime_dependencies("") == ()


def test_a_theme_folder_s_gemspec_is_its_own_or_the_installed_one(tmp_path: Path) -> None:
    gems, specs = tmp_path / "gems", tmp_path / "specifications"
    (gems / "minima-2.5.1").mkdir(parents=True)
    specs.mkdir()
    (specs / "minima-2.5.1.gemspec").write_text(INSTALLED)
    assert folder_gemspec(gems / "minima-2.5.1") == INSTALLED  # RubyGems' installed spec
    (gems / "minima-2.5.1" / "minima.gemspec").write_text(SOURCE)
    assert folder_gemspec(gems / "minima-2.5.1") == SOURCE  # a checkout's own comes first
    (gems / "other").mkdir()
    assert folder_gemspec(gems / "other") == ""
