#!/usr/bin/env python3
"""Write tests/unit/bert_texts.txt: the texts the BERT encoder is checked on
against the reference (tools/bert-reference.sh, tests/unit/test_bert.c).

usage: bert-texts.py OUT

Deterministic (a fixed seed; plain Python 3, no packages).  One text a line
("\\n" ends a text; "\\r" and every other code point stays in it): realistic
bios and screening criteria (a third of the calibration sets), hand-written
Unicode cases (accents, combining marks, CJK, Hangul, kana, Arabic, Hebrew,
Cyrillic, Greek, Devanagari, Thai, emoji, control and format characters,
special-token look-alikes), empty-ish lines, numbers, URLs, mixed case,
long words around the 100-character WordPiece limit, random mixtures of
scripts, and very long texts (600+ words, past 512 tokens).
"""
import random, sys

R = random.Random(34)

HAND = [
    "", " ", "  ", "\t", "!!!", "...", "?", "-", "'", "\"quoted\"", "a", "A", "I",
    "Café crème, naïve façade, Zoë Ångström, São Paulo, Dvořák",
    "Crème brûlée à la française; où est l'hôtel? Ça va!",
    "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞß àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿ",
    "Łódź, Kraków, Gdańsk, Wrocław — Polish cities with diacritics",
    "İstanbul, Ankara, Iğdır, Şanlıurfa, Çanakkale (Turkish dotted İ and dotless ı)",
    "Straße, Größe, Fußgänger, ÄÖÜ äöü ẞ",
    "e\u0301 a\u0300 o\u0308 n\u0303 combining acute, grave, diaeresis, tilde",
    "Z\u0351\u0358a\u0337\u0345l\u0336g\u0322o\u0334 text with stacked marks",
    "\u1e9b\u0323 \u1e0b\u0323 \u0071\u0307\u0323 canonical ordering cases",
    "北京大学的研究人员 東京 서울",
    "我是一名软件工程师，住在上海，喜欢跑步和阅读。",
    "日本語のテキスト：ひらがな、カタカナ、漢字を含みます。",
    "한국어 문장입니다. 저는 서울에 살고 있는 연구원입니다.",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ half-width ｶﾀｶﾅ",
    "豈更車賈滑串句龜 CJK compatibility ideographs",
    "𠀀𠀁𪜀 𫝀 𬺰 extension B-F ideographs",
    "مرحبا بالعالم، أنا باحث في القاهرة",
    "שלום עולם, אני גר בתל אביב",
    "Привет, мир! Я инженер-программист из Москвы. ЁЖИК ёжик",
    "Καλημέρα κόσμε· Ελληνικά με τόνους: ά έ ή ί ό ύ ώ ΐ ΰ",
    "नमस्ते दुनिया, मैं दिल्ली में रहता हूँ",
    "สวัสดีชาวโลก ฉันอาศัยอยู่ในกรุงเทพ",
    "Tiếng Việt có nhiều dấu: ắ ằ ẳ ẵ ặ ố ồ ổ ỗ ộ",
    "Loves hiking 🏔️ and coffee ☕ 👩‍💻",
    "🥰🥳🦄🧑‍🚀 👍🏽 🇬🇧 🇫🇷 emoji only and flags",
    "❤️ ✨ ™ © ® ℃ № ½ ⅓ ¼ symbols",
    "math: ∑ ∫ √ ∞ ≠ ≤ ≥ ± × ÷ α β γ",
    "currency: $100, €50, £30, ¥1000, ₹500, ₿0.01",
    "ctrl\x01chars\x02here\x07and\x1bthere\x7f end",
    "zero\u200bwidth\u200cjoin\u200dchars\ufeffbom",
    "soft\u00adhyphen and non\u00a0breaking\u2009thin\u3000ideographic spaces",
    "line\u2028separator\u2029paragraph\u0085next line",
    "carriage\rreturn inside",
    "tab\tseparated\tvalues\t1\t2\t3",
    "replacement \ufffd char and private \ue000 use \U000f0000",
    "unassigned \u0378 \u0380 \U000e0001 tag \U000e0041 and \U0010fffd plane 16",
    "[CLS] [SEP] [MASK] [PAD] [UNK] special tokens in the text",
    "a[SEP]b [MASK]ed un[CLS]ear [cls] [Mask] [SEP",
    "##suffix ## #hashtag #MeToo @mention",
    "http://example.com/path?query=1&x=y#frag https://arps.example.org/v1/studies/123",
    "email: jane.doe+test@example.co.uk, phone +44 20 7946 0958",
    "numbers 0 1 42 3.14159 1,000,000 1e-12 -273.15 0x1F 2026-11-28 12:34:56",
    "ALL CAPS SHOUTING TEXT ABOUT CLINICAL TRIALS",
    "mIxEd CaSe TeXt WiTh RaNdOm CaPiTaLs",
    "snake_case_identifier camelCaseIdentifier kebab-case-identifier",
    "C++ C# F# .NET Node.js Vue.js A/B testing R&D Q&A 24/7",
    "don't won't can't it's you're they've I'd",
    "(parentheses) [brackets] {braces} <angles> «guillemets» „quotes“ ‘single’",
    "dashes: - – — ― and ellipsis … and bullets • ◦ ‣",
    "~`!@#$%^&*()_+-={}|[]\\:\";'<>?,./",
    "a" * 99, "b" * 100, "c" * 101, "unbelievably" * 12,
    "pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious",
    "x" * 250 + " after a very long word",
    "ǅ ǈ ǋ ǲ titlecase digraphs and ﬁ ﬂ ﬀ ligatures",
    "Ⅻ ⅻ Ⓐ ⓐ 𝐀𝐁𝐂 𝕏 mathematical alphanumerics",
    "ÅÅ Ω Ω K K (precomposed vs decomposed vs compatibility)",
    "Ǆemal Ǉubljana ǊeǊe",
    "ß ẞ ﬅ ﬆ ŉ ǰ ΐ ΰ և ẖ ẗ ẘ ẙ ẚ special casing",
    "\u0130\u0049\u0131\u0069 dotted and dotless",
    "ᄀ ᅡ ᆨ 가 각 jamo and syllables",
    "한 𝄞 𝅘𝅥𝅮 music 𝅗𝅥 \U0001d165\U0001d16d\U0001d16e",
]

SCRIPTS = [
    (0x41, 0x5A), (0x61, 0x7A), (0x30, 0x39), (0x21, 0x2F), (0xC0, 0x24F), (0x370, 0x3FF),
    (0x400, 0x4FF), (0x590, 0x5FF), (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F),
    (0x300, 0x36F), (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x20A0, 0x20CF), (0x2100, 0x214F),
    (0x3040, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x1100, 0x11FF), (0xFF00, 0xFFEF),
    (0x1F300, 0x1F6FF), (0x1F900, 0x1F9FF), (0x0, 0x1F), (0x7F, 0x9F), (0xFE00, 0xFE0F),
    (0x20000, 0x2A6DF), (0xF900, 0xFAFF), (0x2E80, 0x2EFF), (0x3000, 0x303F),
]

WORDS = ("study participant trial research clinical health survey diabetes runner nurse "
         "engineer teacher mother father student retired veteran smoker vegetarian "
         "London Paris Berlin Tokyo Lagos Lima sleep exercise anxiety asthma allergy "
         "medication pregnancy weekly daily remote online interview questionnaire").split()


def rand_mix():
    out = []
    for _ in range(R.randint(1, 12)):
        if R.random() < 0.4:
            w = R.choice(WORDS)
            w = w.upper() if R.random() < 0.2 else w.capitalize() if R.random() < 0.3 else w
            out.append(w)
        else:
            lo, hi = R.choice(SCRIPTS)
            s = "".join(chr(R.randint(lo, hi)) for _ in range(R.randint(1, 8)))
            out.append(s.replace("\n", " "))
        out.append(R.choice([" ", " ", " ", "", "-", ", ", ". "]))
    return "".join(out).strip(" ") if R.random() < 0.5 else "".join(out)


def load(path):
    return [l.rstrip("\n") for l in open(path, encoding="utf-8")
            if l.strip() and not l.startswith("#")]


def main():
    bios = load("tests/matching/calibration/bios.txt")
    crit = load("tests/matching/calibration/criteria.txt")
    texts = list(HAND)
    texts += bios[::3] + crit[::3]
    for _ in range(110):
        texts.append(rand_mix())
    # case, number, URL variations of real texts
    for t in R.sample(bios + crit, 24):
        texts.append(R.choice([t.upper(), t.lower(), t.title(), t.swapcase()]))
    for i in range(12):
        texts.append(f"Participant #{R.randint(1, 99999)} aged {R.randint(18, 90)} "
                     f"paid £{R.randint(1, 500)}.{R.randint(0, 99):02d} via "
                     f"https://pay.example.com/u/{R.getrandbits(40):x}?ref={i}")
    # long texts: bios run together, 600+ words (past 512 tokens)
    for i in range(6):
        words = []
        while len(words) < 600 + 60 * i:
            words += R.choice(bios + crit).split()
        t = " ".join(words)
        if i % 2:
            t = "Ünïcödé ünd 日本 " + t + " 🎉 ending"
        texts.append(t)
    texts.append(" ".join(R.choice(WORDS) for _ in range(700)))
    texts.append("漢" * 600)
    texts.append("é" * 1000)
    texts.append("!" * 700)
    for t in texts:
        assert "\n" not in t
    if len(texts) < 500:
        sys.exit(f"only {len(texts)} texts")
    with open(sys.argv[1], "w", encoding="utf-8", newline="") as f:
        f.write("".join(t + "\n" for t in texts))
    print(f"{len(texts)} texts -> {sys.argv[1]}", file=sys.stderr)


if __name__ == "__main__":
    main()
