"""English: how a secret is said ("my pin's 4471", "the digits on the back are 737", "I put Saint Anne's for the
security question", "punch in 5520 to turn the alarm off")."""

from core.safety.secret_lexicon import Grammar, Language, Names

GRAMMAR = Grammar(
    is_=r"is|was|will\s+be|are|were|'s|’s|=|:|->|→|says|reads|it(?:'s|’s|\s+is)",
    to=r"(?:(?:was|has\s+been|got|is)\s+)?(?:changed|set|updated|reset|switched)\s+(?:it\s+)?to|to",
    it_is=r"it(?:'s|’s|\s+is|\s+was)|that(?:'s|’s|\s+is)|which\s+is|is",
    article=r"the|a|an",
    of=r"for|of|to|at|in|on|from",
    now=r"now|still|currently|again|somewhere|here|below|btw|please|(?:has\s+|was\s+|got\s+)?changed",
    as_=r"as",
    mine=r"(?:my|our|the|his|her|their|your)",
    and_=r"and|but|or|so|btw|please",
    not_values=r"""(?:a|an|the|my|your|his|her|our|their|its|this|that|it|me|you|him|them|us|is|was|be|been|being|are
        |were|will|would|should|could|must|can|may|might|do|does|did|done|too|very|so|quite|really|not|no|never|none
        |nothing|any|some|same|different|other|another|new|old|wrong|incorrect|invalid|expired|expiring|weak|strong
        |long|short|secure|insecure|safe|unsafe|simple|easy|hard|correct|right|required|needed|mandatory|optional|case
        |sensitive|case-sensitive|changed|reset|forgotten|lost|stored|saved|kept|written|hidden|encrypted|hashed
        |managed|protected|set|updated|working|broken|locked|blocked|in|on|at|of|for|with|from|by|under|inside
        |somewhere|here|there|down|and|or|but|if|when|because|what|which|who|how|why|where|still|now|already|just|also
        |only|again|about|around|like|use|access|log|sign|get|remember|keep|change|enter|type|open|unlock|taped|stuck
        |printed|missing|unknown|secret|private|personal|complicated|complex|random|generated|temporary|default|fine
        |ok|okay|good|bad|great|terrible|obvious|predictable|valid|active|disabled|enabled|compromised|leaked|stolen
        |shared|known|longer|shorter|stronger|weaker|everywhere|something|anything|coming|pending|due|sent|behind|back
        |front|over|below|above|outside)""",
    units=r"characters?|chars|letters|digits|numbers|symbols|words|long|days|weeks|months|years|times|minutes|hours",
    digits=r"zero|oh|one|two|three|four|five|six|seven|eight|nine",
)

LANGUAGE = Language(
    code="en",
    grammar=GRAMMAR,
    password=Names(
        names=r"passwords?|passwd|pwd|pw|pass\s?code|(?:wi-?fi|wlan|network|wpa2?)\s+(?:key|password)",
        # "the wifi in the studio is 'Pottery2Go'": what it opens, then a value in a password's shape.
        openers=r"wi-?fi|wlan|router|hotspot",
        phrases=r"pass\s?phrases?|(?:seed|recovery|secret)\s+(?:phrases?|words)|mnemonic(?:\s+phrase)?",
    ),
    pin=Names(
        names=r"""pins?(?:\s+(?:code|number|no\.?))?|sim\s+pin|puk(?:\s+code)?|unlock\s+(?:code|pin|passcode)
            |(?:phone|iphone|screen(?:\s+lock)?)\s+(?:pin|passcode|code)"""
    ),
    card_security_code=Names(
        names=r"""cvv2?|cvc2?|cid|csc|card\s+security\s+code|card\s+verification\s+(?:code|value|number)
            |security\s+code|(?:(?:three|four|3|4)\s+)?(?:digits|numbers|numerals)\s+on\s+the\s+back
            |code\s+on\s+the\s+back|back\s+of\s+(?:the|my|your)\s+card""",
        openers=r"(?:credit\s+|debit\s+)?cards?|visa|mastercard|amex",
        markers=r"""code(?:\s+on\s+the\s+back)?|cvv|cvc|security\s+code|(?:(?:three|four|3|4)\s+)?(?:digits|numbers)
            (?:\s+on\s+the\s+back)?|on\s+the\s+back""",
    ),
    security_answer=Names(
        phrases=r"""security\s+(?:questions?|answers?)|secret\s+(?:questions?|answers?)|challenge\s+questions?
            |(?:mother|mom|mum|mama)(?:'s|’s)\s+maiden\s+name|maiden\s+name\s+of\s+(?:my|your)\s+mother
            |memorable\s+(?:word|answer|information|info)""",
        # A form's question quoted by name: "for the 'name of your favourite teacher' question I gave ...".
        openers=r"""security\s+questions?|secret\s+questions?|challenge\s+questions?|(?:mother|mom|mum|mama)(?:'s|’s)
            \s+maiden\s+name|memorable\s+(?:word|information)|(?:if|when)\s+(?:the\s+bank|they)\s+asks?(?:\s+(?:for
            |about))?|['"‘“«„][^'"’”»“]{3,60}['"’”»“]\s+question|(?:for|in|on)\s+(?:the\s+)?(?:question\s+)?['"‘“«„]
            [^'"’”»“]{3,60}['"’”»“]""",
        markers=r"""answers?|(?:i\s+)?(?:put|answered|wrote|typed|chose|used|gave|entered|set)(?:\s+(?:down|in))?
            |it(?:'s|’s|\s+is)|that(?:'s|’s|\s+is)""",
    ),
    one_time_code=Names(
        names=r"""(?:one[\s-]?time|verification|security|login|log-in|sign[\s-]?in|authentication|auth|2fa
            |two[\s-]factor|mfa|sms|otp|access|reset|backup|recovery|emergency)\s+(?:codes?|pins?|passcodes?|keys?)
            |otp|totp|recovery\s+keys?|code\s+(?:that\s+|which\s+)?(?:[\w'’]+\s+){0,3}?(?:texted|sent|emailed|got
            |received)(?:\s+(?:me|to\s+me))?|codes?\s+(?:from|in|on)\s+(?:the\s+|my\s+)?(?:[\w-]+\s+)?(?:app
            |authenticator|sms|text|email)|confirmation\s+code(?=\s*(?::|is|=)?\s*\d[\d\s-]{2,10}(?:[.,;!?]|\s|$))
            |(?:got|received|get|getting)\s+(?:a|the|this)\s+code""",
        openers=r"""(?:\d|four|five|six|seven|eight)[\s-]digit\s+codes?|codes?\s+(?:by|via)\s+(?:text|sms)
            |(?:texted|sent|emailed)\s+me\s+(?:a|the)\s+code|codes?\s+(?:that\s+|which\s+)?(?:they|you|the\s+bank
            |it)\s+(?:sms|texts?|texted|sends?|sent|emails?)|sms|text\s+message""",
        markers=r"codes?|otp|type|enter|key\s+in|put\s+in|use",
    ),
    door_code=Names(
        names=r"""(?:door|gate|alarm|locker|safe|garage|entry|entrance|lockbox|key\s?safe|key\s?box|keypad|padlock
            |lock|bike\s+lock|storage|shed|mailbox|disarm|house)\s+(?:codes?|combinations?|combos?|pins?)|combinations?|combos?
            |code\s+(?:for|to|of)\s+(?:the\s+|my\s+|our\s+)?(?:\w+\s+)?(?:door|gate|alarm|garage|building|lockbox
            |safe|padlock|lock|shed|house|flat|apartment|disarm|open)""",
        openers=r"""doors?|gates?|alarms?|lockbox|key\s?safe|key\s?box|padlock|garage|keypad|entrance|intercom
            |buzzer|lockers?|combination\s+lock""",
        markers=r"""(?:punch|key|typ|tap|enter|dial|press)\w*(?:\s+in)?|opens?\s+with|unlocks?\s+with|disarm\s+with
            |code|combination|takes|uses|accepts|(?:opened|unlocked|closed|locked)\s+(?:it\s+)?with|with""",
    ),
    login=Names(
        names=r"log-?ins?(?:\s+(?:details|name|id))?|credentials|creds",
        openers=r"""log(?:ged|ging)?\s+(?:in|into|on)|sign(?:ed|ing)?\s+in(?:to)?|credentials|log-?in|online\s+banking
            |internet\s+banking|mobile\s+banking|bank(?:ing)?\s+(?:app|site|website|portal)|passwords?|pass\s?code
            |pwd|pw|pins?""",
        markers=r"""user(?:\s?name)?|user\s+id|login(?:\s+id)?|(?:customer|member|membership|client|student)\s+(?:number
            |no\.?|id)|account\s+id|pass|pw|passcode""",
    ),
)
