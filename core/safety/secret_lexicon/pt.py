"""Portuguese (Portugal and Brazil): "a minha senha do banco é ...", "a palavra-passe", "os três números de trás do
cartão", "na pergunta secreta coloquei ...", "para desligar o alarme digita ..."."""

from core.safety.secret_lexicon import Grammar, Language, Names

GRAMMAR = Grammar(
    is_=r"é|era|será|seria|são|eram|foi|fica|ficou|=|:|->|→|tem|t[áa]\s+escrito|está\s+escrito",
    to=r"(?:mud\w*|troc\w*|alter\w*)\s+(?:para|pra)|para|pra|por",
    it_is=r"é|era|será|são",
    article=r"o|a|os|as|um|uma",
    of=r"de|do|da|dos|das|para|pro|pra|no|na|ao|à",
    now=r"agora|ainda|já|atualmente|nova|novo|por\s+favor|mudou|foi\s+alterad[ao]",
    as_=r"como",
    mine=r"(?:meu|minha|meus|minhas|seu|sua|nosso|nossa|o|a)",
    and_=r"e|mas|ou|então|por\s+favor",
    not_values=r"""(?:o|a|os|as|um|uma|meu|minha|seu|sua|muito|muita|demais|fraca|fraco|forte|longa|curta|segura
        |seguro|insegura|fácil|difícil|complicada|errada|errado|incorreta|correta|nova|novo|velha|antiga|mesma|mesmo
        |igual|diferente|obrigatória|necessária|secreta|privada|pessoal|expirada|vencida|bloqueada|trocada|alterada
        |salva|guardada|anotada|esquecida|perdida|boa|ruim|essa|esse|esta|este|isso|isto|que|de|em|com|para|por|sem
        |não|sim|também|ainda|já|tão|como|qual|onde|quando|sempre|nunca|nada|algo|válida|inválida|temporária
        |provisória|simples|óbvia|aleatória|colada|escrita|aqui|ali|lá|atrás|embaixo|dentro)""",
    units=r"caracteres|letras|dígitos|números|algarismos|símbolos|palavras|dias|meses|anos|vezes",
    digits=r"zero|um|uma|dois|duas|três|tres|quatro|cinco|seis|meia|sete|oito|nove",
)

LANGUAGE = Language(
    code="pt",
    grammar=GRAMMAR,
    password=Names(
        names=r"senhas?|palavras?[-\s]passe|password|chave\s+d[oa]\s+wi-?fi",
        openers=r"wi-?fi|roteador",
        phrases=r"frases?[-\s](?:senha|secreta|semente|de\s+recuperação)|palavras\s+(?:de\s+recuperação|semente|secretas)",
    ),
    pin=Names(
        names=r"""pin|código\s+pin|senha\s+do\s+cartão(?:\s+de\s+(?:débito|crédito))?|puk|código\s+de\s+desbloqueio
            |senha\s+do\s+(?:celular|telemóvel)"""
    ),
    card_security_code=Names(
        names=r"""cvv2?|cvc2?|código\s+(?:de\s+segurança|cvv|do\s+verso|de\s+trás)|(?:(?:os\s+)?(?:três|tres
            |quatro|3|4)\s+)?(?:números|dígitos|algarismos)\s+(?:de\s+trás|do\s+verso|atrás)|(?:atrás|verso|trás)\s+do
            \s+(?:meu\s+)?cartão""",
        openers=r"cartão|cartões|cartao|visa|mastercard|amex|nubank",
        markers=r"""código(?:\s+(?:do\s+verso|de\s+trás|de\s+segurança))?|cvv|cvc|(?:números|dígitos)(?:\s+de\s+trás
            |\s+do\s+verso)?""",
    ),
    security_answer=Names(
        phrases=r"""perguntas?\s+(?:de\s+segurança|secretas?)|respostas?\s+(?:de\s+segurança|secretas?)
            |nome\s+de\s+solteira\s+da\s+(?:minha|sua)\s+mãe""",
        openers=r"""perguntas?\s+(?:de\s+segurança|secretas?)|nome\s+de\s+solteira|(?:se|quando)\s+o\s+banco\s+perguntar?
            (?:\s+(?:por|pelo|pela))?|(?:na|em|para)\s+(?:pergunta\s+)?['"‘“«][^'"’”»]{3,60}['"’”»]""",
        markers=r"respostas?|coloquei|pus|botei|respondi|escrevi|escolhi|usei",
    ),
    one_time_code=Names(
        names=r"""códigos?\s+(?:de\s+(?:verificação|recuperação|backup|segurança|autenticação|acesso\s+único
            |uso\s+único|login)|otp|por\s+sms|do\s+sms|sms|2fa)|chaves?\s+de\s+recuperação|otp|token
            |códigos?\s+que\s+(?:[\w'’]+\s+){0,3}?(?:cheg|mand|envi|receb)\w*(?:\s+[\w'’]+){0,3}?|códigos?\s+do\s+app
            |código\s+de\s+confirmação(?=\s*(?::|é|=)?\s*(?:o\s+)?\d[\d\s-]{2,10}(?:[.,;!?]|\s|$))|(?:receb\w*|cheg\w*)
            \s+(?:o|um)\s+código""",
        openers=r"""códigos?\s+de\s+(?:\d|quatro|cinco|seis|oito)\s+(?:dígitos|números|algarismos)|códigos?\s+por
            \s+sms|sms""",
        markers=r"códigos?|otp|token",
    ),
    door_code=Names(
        names=r"""códigos?\s+(?:de|do|da|para|pra)\s+(?:a\s+|o\s+)?(?:porta|portão|portaria|alarme|garagem|entrada
            |cadeado|cofre|fechadura|prédio|casa|condomínio|desarmar|desligar|abrir)|combinaç(?:ão|ões)
            |senha\s+d[oa]\s+(?:alarme|portão|porta|cofre|cadeado)|código\s+de\s+acesso""",
        openers=r"portas?|portão|portaria|alarmes?|cadeado|cofre|fechadura|garagem|interfone|condomínio|prédio",
        markers=r"""digit\w*|tecl\w*|coloc[ae]|bot[ae]|apert\w*|código|combinação|senha
            |abr\w*\s+com|com""",
    ),
    login=Names(
        names=r"usuários?|usuarios?|nome\s+de\s+usuário|login|credenciais|dados\s+de\s+acesso",
        openers=r"""internet\s+banking|banco\s+online|app\s+do\s+banco|credenciais|dados\s+de\s+acesso|(?:entro
            |entrar|acesso|acessar|logar)\s+(?:no|na|em)|login|senhas?|pin""",
        markers=r"usuários?|usuarios?|login|senha|código|número\s+d[eo]\s+cliente|matrícula",
    ),
)
