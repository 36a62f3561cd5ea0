"""Sass and SCSS as jekyll-sass-converter compiles them (libsass, in a bounded child
process): :mod:`.convert` for a stylesheet, a partial's imports and the ``scssify`` and
``sassify`` filters; :mod:`.bounded` runs the compiler within time and memory limits."""
