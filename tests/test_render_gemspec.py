"""A gem theme's runtime dependencies from its gemspec's text (render/read/gemspec.py),
found beside the theme (watch/theme.py)."""

from __future__ import annotations

from pathlib import Path

from deploybot.render.read.gemspec import runtime_dependencies, ships_file
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


# Which files a gem ships: the shapes theme gemspecs write ``files`` in.
GIT_SELECT = """
  spec.files = `git ls-files -z`.split("\\x0").select do |f|
    f.match(%r!^(assets|_(includes|layouts|sass)/|(LICENSE|README)((\\.(txt|md|markdown)|$)))!i)
  end
"""
GIT_SELECT_CONFIG = (
    'spec.files = `git ls-files -z`.split("\\x0").select { |f| '
    "f.match(%r{^(assets|_layouts|_includes|_sass|_config\\.yml|LICENSE|README)}i) }\n"
)
GIT_REJECT = 's.files = `git ls-files -z`.split("\\x0").reject { |f| f =~ /^(test|spec)\\// }\n'
GIT_GREP = 's.files = `git ls-files -z`.split("\\x0").grep(%r{^(_layouts|assets)/})\n'
DIR_GLOB = 'spec.files = Dir["{_layouts,_includes,_sass,assets}/**/*", "_config.yml"]\n'


def test_a_gemspec_s_files_say_which_paths_the_gem_ships() -> None:
    assert ships_file(GIT_SELECT, "_config.yml") is False  # minima's, pages-themes' shape
    assert ships_file(GIT_SELECT, "_layouts/default.html") is True
    assert ships_file(GIT_SELECT, "readme.md") is True  # //i
    assert ships_file(GIT_SELECT_CONFIG, "_config.yml") is True
    assert ships_file(GIT_SELECT_CONFIG, "index.md") is False
    assert ships_file(GIT_REJECT, "_config.yml") is True
    assert ships_file(GIT_REJECT, "test/x.rb") is False
    assert ships_file(GIT_GREP, "_config.yml") is False
    assert ships_file(GIT_GREP, "assets/a.css") is True
    assert ships_file(DIR_GLOB, "_config.yml") is True
    assert ships_file(DIR_GLOB, "assets/css/a.scss") is True
    assert ships_file(DIR_GLOB, "index.md") is False


def test_a_files_list_this_cannot_read_tells_nothing() -> None:
    assert ships_file("", "_config.yml") is None
    assert ships_file('spec.files = FileList["**/*"]\n', "_config.yml") is None
    narrowed = 'spec.files = `git ls-files -z -- _layouts`.split("\\x0")\n'
    assert ships_file(narrowed, "_config.yml") is None  # a pathspec narrows the list
    chained = 'spec.files = `git ls-files -z`.split("\\x0").map { |f| f }\n'
    assert ships_file(chained, "_config.yml") is None
